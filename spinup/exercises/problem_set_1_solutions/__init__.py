"""problem_set_1_solutions"""
