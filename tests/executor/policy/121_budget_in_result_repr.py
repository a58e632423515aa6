# expect: refused Maximum number of 1000000 iterations in While loop exceeded
# The result's repr runs after the last statement, still under the budgets; exhausting one
# there ends the run as an error, not as an ok result with a placeholder.
class K:
    def __repr__(self):
        while True:
            pass
K()
