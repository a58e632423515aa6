# imports: uuid
# expect: refused Forbidden: calling property.__init__ again on a property object
# 323 as a method call: the walk looks __init__ up on property, unbound, and calls it with
# the library's property first.
import uuid
uuid.UUID.hex.__init__(lambda self: 'HIJACKED')
print(uuid.UUID(int=2).hex)
