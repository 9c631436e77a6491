"""A tiny module for the mutant suite's tests."""


def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return high
    return value


def words(text):
    return [w.lower() for w in text.strip().split(" ") if w]


def total(prices, discount=0):
    subtotal = sum(prices)
    return subtotal - subtotal * discount // 100


def first_even(numbers):
    for i in range(len(numbers)):
        if numbers[i] % 2 == 0 and numbers[i] != 0:
            return numbers[i]
    return None
