class C:
    @staticmethod
    def helper(v):
        return v * 2
    value = helper.__func__(21) if False else 42
    def use(self):
        return self.helper(self.value)
C().use()
