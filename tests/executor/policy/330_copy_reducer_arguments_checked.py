# imports: copy, typing, operator, collections
# expect: refused Forbidden access to a module's namespace
# typing's alias reducer is (operator.getitem, (globals()[alias._name], args)): an alias named
# '__builtins__' (made by its class, which type() answers; 328 refuses setting _name) had copy
# deep-copy typing's builtins dict into the memo, where a plain dict holding the real eval,
# exec, open and __import__ stayed for the snippet, and rebuild the alias as the real
# __import__. A reducer's arguments are checked as values the snippet may hold.
import copy, typing, operator, collections
alias = type(typing.Literal['a'])
lit = alias(typing.Literal, ('__import__',), name='__builtins__')
memo = {}
imp = copy.deepcopy([lit], memo)
print(list(collections.Counter(map(operator.call, imp, ['os']))))
