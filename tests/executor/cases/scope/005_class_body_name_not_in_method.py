# expect: error NameError
class C:
    secret = 1
    def get(self):
        return secret
C().get()
