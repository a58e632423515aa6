def grade(s):
    return 'A' if s >= 90 else 'B' if s >= 80 else 'C' if s >= 70 else 'F'
print([grade(s) for s in (95, 85, 75, 10)])
grade(80)
