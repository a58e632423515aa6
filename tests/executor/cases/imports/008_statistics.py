import statistics
data = [2, 4, 4, 4, 5, 5, 7, 9]
print(statistics.mean(data), statistics.median(data), statistics.mode(data), statistics.pstdev(data))
print(statistics.median_low([1, 3, 5, 7]), statistics.variance([1, 2, 3, 4]), statistics.fmean([1, 2]))
statistics.quantiles([1, 2, 3, 4, 5, 6, 7, 8], n=4)
