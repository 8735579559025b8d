"""problem_set_3_solutions"""
