import datetime
(datetime.date(2020, 5, 17), datetime.time(8, 15, 30), datetime.timedelta(days=3, seconds=7), datetime.datetime(2021, 6, 1, 0, 0, 1))
