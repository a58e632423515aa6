# expect: refused Forbidden access to a module's namespace
# Values taken out of a container by a for loop (or an unpacking) are checked when named, as
# call results, attributes and subscripts are: a leaked namespace inside a list stays out of
# reach.
for d in [{'__builtins__': {}}]:
    pass
