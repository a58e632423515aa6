match (1, (2, 3)):
    case (a, (b, c)):
        pass
(a, b, c)
