# expect: native
class NotIter:
    pass
for x in NotIter():
    pass
