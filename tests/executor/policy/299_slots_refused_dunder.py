# imports: copy
# expect: refused Forbidden slot __deepcopy__ in class K
# __slots__ = ('__deepcopy__',) made a member descriptor under a hook's name: a data descriptor
# of the class, answering the lookup, which library code fills (copy's slotstate loop runs
# setattr(y, '__deepcopy__', f)). A snippet's class may name its slots with the dunders its
# methods may have only; ordinary slots and '__dict__'/'__weakref__' still work (case 300).
class K:
    __slots__ = ('__deepcopy__',)
