"""problem_set_4"""
