msgs = []
for expr in (lambda: 1 / 0, lambda: 1 // 0, lambda: 1 % 0, lambda: 1.0 / 0, lambda: divmod(1, 0)):
    try:
        expr()
    except ZeroDivisionError as e:
        msgs.append(str(e))
msgs
