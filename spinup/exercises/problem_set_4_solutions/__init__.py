"""problem_set_4_solutions"""
