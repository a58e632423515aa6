# imports: datetime, time, decimal, pickle, pandas, numpy, copy
# The run's frame has builtins of its own, whose __import__ loads only C code's lazy imports
# and the run's allowed modules: what C code imports while the snippet's frame is current
# (strptime's _strptime, timetuple's time, pickle saving a global) still works.
import datetime, time, decimal, pickle, pandas, numpy, copy
d = datetime.datetime.strptime('2024-03-01 10:00', '%Y-%m-%d %H:%M')
print(d, d.timetuple().tm_yday, d.strftime('%A'), time.strptime('2024', '%Y').tm_year)
print(format(decimal.Decimal('1234.5'), ',.2f'), len(pickle.dumps(decimal.Decimal(1))) > 0)
print(len(pickle.dumps(pandas.DataFrame({'a': [1]}))) > 0, len(pickle.dumps(numpy.arange(3))) > 0)
print(len(pickle.dumps(iter([1, 2]))) > 0, len(pickle.dumps(reversed([1]))) > 0, copy.copy(iter([1])) is not None)
print(pickle.dumps(datetime.date(2024, 1, 1)) == pickle.dumps(datetime.date(2024, 1, 1)))
