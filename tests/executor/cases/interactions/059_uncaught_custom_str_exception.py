# expect: native
class Problem(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code
    def __str__(self):
        return f'problem #{self.code}'
raise Problem(42)
