def pipeline(*fns):
    def run(x):
        for fn in fns:
            x = fn(x)
        return x
    return run
pipeline(str.strip, str.upper, lambda s: s + '!')('  hi ')
