# imports: typing
# expect: refused Forbidden while a snippet runs: typing's code setting attribute '__final__' of class typing.IO
# typing.final stores on whatever it is handed (as runtime_checkable and no_type_check do):
# typing's code, typing's class, the snippet's choice. The module rule's "not when the module
# is one of the code's arguments" has its class counterpart in the rule that a class made at
# import is changed by no library code.
import typing
typing.final(typing.IO)
print("IO final")
