# imports: json
# expect: refused Forbidden: calling module.__init__ again on a module object
# module.__init__ (__init__ is an allowed dunder; on a module it is a slot wrapper) rewrote the
# module's own dict with no attribute store: json.__name__ and __doc__ became the snippet's,
# __spec__ None, and a renamed module's functions no longer matched any module the policy
# judges them by.
import json
json.__init__('os', 'patched by the snippet')
print(json.__name__, json.__doc__)
