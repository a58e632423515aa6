# expect: refused Forbidden definition of dunder __getattribute__ in class G
# __getattribute__ answers every lookup library code makes on the object, dunders included
# (copy's getattr(x, '__reduce_ex__'), numpy's __array_interface__).
class G:
    def __getattribute__(self, name):
        return 'answered ' + name
print(G().anything)
