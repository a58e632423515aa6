results = []
for exc in (KeyError('k'), IndexError(1), ZeroDivisionError(), ValueError('v'), TypeError('t')):
    try:
        raise exc
    except LookupError as e:
        results.append(('lookup', type(e).__name__))
    except ArithmeticError:
        results.append('arith')
    except (ValueError, TypeError) as e:
        results.append(('value-or-type', str(e)))
results
