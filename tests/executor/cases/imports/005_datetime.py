import datetime
d = datetime.date(2024, 2, 28)
print(d + datetime.timedelta(days=2), d.weekday(), d.isoformat(), d.strftime('%Y/%m/%d'), d.replace(day=1))
dt = datetime.datetime(2024, 1, 1, 12, 30)
print(dt, dt + datetime.timedelta(hours=13), (dt - datetime.datetime(2023, 12, 25)).days, dt.time())
print(datetime.datetime.strptime('2024-03-05 10:00', '%Y-%m-%d %H:%M'), datetime.date.fromisoformat('2020-01-31'))
dt
