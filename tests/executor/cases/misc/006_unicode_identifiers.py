größe = 3
π = 3.14159
naïve_sum = größe + π
print(größe, round(naïve_sum, 2))
名前 = 'name'
名前
