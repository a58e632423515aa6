def lcs(a, b):
    dp = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, ca in enumerate(a, 1):
        for j, cb in enumerate(b, 1):
            dp[i][j] = dp[i - 1][j - 1] + 1 if ca == cb else max(dp[i - 1][j], dp[i][j - 1])
    out = []
    i, j = len(a), len(b)
    while i and j:
        if a[i - 1] == b[j - 1]:
            out.append(a[i - 1])
            i, j = i - 1, j - 1
        elif dp[i - 1][j] >= dp[i][j - 1]:
            i -= 1
        else:
            j -= 1
    return ''.join(reversed(out))
[lcs('ABCBDAB', 'BDCABA'), lcs('kitten', 'sitting'), lcs('', 'x')]
