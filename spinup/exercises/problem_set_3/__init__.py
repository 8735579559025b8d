"""problem_set_3"""
