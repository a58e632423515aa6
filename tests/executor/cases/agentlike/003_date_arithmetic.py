import datetime
start = datetime.date(2024, 1, 29)
deadlines = [start + datetime.timedelta(weeks=w) for w in range(4)]
workdays = [d for d in deadlines if d.weekday() < 5]
print([d.isoformat() for d in deadlines])
span = deadlines[-1] - deadlines[0]
(span.days, [d.strftime('%a %d %b') for d in workdays], datetime.date(2024, 3, 1) - datetime.date(2024, 2, 1))
