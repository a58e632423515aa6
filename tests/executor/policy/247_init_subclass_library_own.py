# imports: typing
# expect: refused Forbidden access to dunder attribute: __init_subclass__ of a class the snippet did not make
# A library class's own __init_subclass__, bound to that class, would run its subclass
# registration again on a class that is not new (Generic's sets __parameters__ on the class
# it is given): refused, while super().__init_subclass__() from a snippet class works (095).
import typing
typing.Generic.__init_subclass__()
