"""problem_set_1"""
