"""problem_set_2_solutions"""
