# imports: pprint, json
# expect: refused Forbidden: pprint's printer _pprint_simplenamespace formatting a module object
# A module's namespace read through __dict__ is every store into it at once: library code
# writing into that dict makes no attribute store (UserDict.__copy__ wrote json's namespace
# through a __new__ answering json, 331). Here pprint's namespace printer, filed by the snippet
# under module's repr in the class-level dispatch table, read json's __dict__ and handed each
# value to the next hook: the real builtins among them. Only a module's own code, typing and
# dataclasses get a module's __dict__ while a snippet runs (guard_store.c; unit test
# test_text_code_is_no_modules). Since case 354 the namespace printer itself formats only a
# types.SimpleNamespace (guard_pprint.c), which refuses this first.
import pprint, json
d = pprint.PrettyPrinter._dispatch
d[type(json).__repr__] = [v for v in d.values() if v.__name__ == '_pprint_simplenamespace'][0]
print(pprint.pformat(json, width=5)[:80])
