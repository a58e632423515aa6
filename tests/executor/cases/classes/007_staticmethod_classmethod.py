class Counter:
    count = 0
    def __init__(self):
        Counter.count += 1
    @classmethod
    def make(cls):
        return cls()
    @staticmethod
    def helper(x):
        return x * 2
    @classmethod
    def total(cls):
        return cls.count
class Sub(Counter):
    pass
Counter()
Sub.make()
print(Counter.helper(4), Counter.total(), Sub.total(), type(Sub.make()).__name__)
Counter.count
