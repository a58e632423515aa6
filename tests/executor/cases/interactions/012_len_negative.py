# expect: native
class L:
    def __len__(self):
        return -1
len(L())
