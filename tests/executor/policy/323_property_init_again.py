# imports: uuid
# expect: refused Forbidden access to property.__init__ unbound
# property.__init__ run again on the property in a library class's dict changed what every
# UUID answers for .hex, past the store check that refuses `uuid.UUID.hex = ...`. The method
# call form passes it unbound, self first: refused as called on an object the snippet did not
# make (324), and held unbound, as here, refused outright.
import uuid
init = property.__init__
init(uuid.UUID.hex, lambda self: 'HIJACKED')
print(uuid.UUID(int=2).hex)
