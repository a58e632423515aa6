# imports: copy, typing, operator, collections
# expect: refused Forbidden access to the builtin function __import__
# typing's alias reducer is (operator.getitem, (globals()[alias._name], args)): an alias named
# '__builtins__' (made by its class, which type() answers; 328 refuses setting _name) was
# rebuilt by copy as the real __import__, handed back in the list deepcopy made, and
# collections' Counter called it from its own frame: os. What copy rebuilds is now checked as
# a value the snippet may hold.
import copy, typing, operator, collections
alias = type(typing.Literal['a'])
lit = alias(typing.Literal, ('__import__',), name='__builtins__')
imp = copy.deepcopy([lit])
print(list(collections.Counter(map(operator.call, imp, ['os']))))
