# imports: json
# expect: refused Forbidden access to a module object with no name
# A module the snippet makes is refused as any module outside the allow-list is ("Forbidden
# access to module: mine"). A subclass's instance is checked as it is handed to the snippet's
# __init__, before that gave it a name: the refusal was CPython's SystemError "nameless module".
import json
class M(type(json)):
    def __init__(self, name):
        super().__init__(name)
m = M('mine')
