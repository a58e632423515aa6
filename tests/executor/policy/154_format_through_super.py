# expect: refused Forbidden access to dunder attribute: __subclasses__
# super() hands back str's format bound to a subclass instance, past the walk's own guard.
class S(str):
    pass
super(S, S("{0.__class__.__subclasses__}")).format(1)
