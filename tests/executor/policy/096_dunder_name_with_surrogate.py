# expect: refused Forbidden access to dunder attribute
# A dunder-shaped name with a lone surrogate has no UTF-8 form; it is still dunder-shaped.
hasattr(1, '__\ud800__')
