"""problem_set_2"""
