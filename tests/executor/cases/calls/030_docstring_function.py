def documented(a):
    """Returns a doubled."""
    return a * 2
print(documented.__doc__, documented.__name__)
documented(21)
