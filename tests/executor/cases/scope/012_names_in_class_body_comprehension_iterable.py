class C:
    base = [1, 2, 3]
    doubled = [v * 2 for v in base]
C.doubled
