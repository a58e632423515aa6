# expect: refused Forbidden access to class os.P: module os is not allowed
# A class the snippet makes is judged by the module it names, as a library's is: named for a
# module the profile does not allow (namedtuple's module=, likewise Enum's functional API or a
# body's __module__), it is that module's class, and holding it is refused.
import collections
P = collections.namedtuple('P', 'x y', module='os')
P(1, 2)
