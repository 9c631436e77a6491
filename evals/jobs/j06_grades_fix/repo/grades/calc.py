"""Averages of exam scores (0-100) and their letter grades."""

# (lowest score for the letter, letter), best letter first
THRESHOLDS = [(90, "A"), (80, "B"), (70, "C"), (60, "D")]


def average(scores: list[int]) -> float:
    """Mean of the scores, rounded to 2 decimals; an empty list is an error."""
    if not scores:
        raise ValueError("no scores")
    return round(sum(scores) / len(scores), 2)


def weighted_average(scores: list[int], weights: list[float]) -> float:
    """Mean of the scores weighted by `weights` (same length), rounded to 2 decimals."""
    if len(scores) != len(weights) or not scores:
        raise ValueError("need one weight per score")
    total_weight = sum(weights)
    return round(sum(s * w for s, w in zip(scores, weights)) / total_weight, 2)


def letter_grade(score: float) -> str:
    """"A" for 90 and above, "B" for 80 and above, "C" for 70, "D" for 60, otherwise "F"."""
    for lowest, letter in THRESHOLDS:
        if score >= lowest:
            return letter
    return "F"
