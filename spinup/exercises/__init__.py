"""Problem sets: exercises with automatic checks (see ``docs/exercises.rst``).

Each exercise is a module you run, e.g.::

    python -m spinup.exercises.problem_set_1.exercise1_1

Starter code lives in ``problem_set_N/``; reference solutions in
``problem_set_N_solutions/``. Try the exercise before reading the solution.
"""
