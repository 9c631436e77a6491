"""A report of a whole class: each student's average and letter."""

from grades.calc import average, letter_grade


def class_report(scores_by_student: dict[str, list[int]]) -> list[str]:
    """One line per student, sorted by name: "<name>: <average with 2 decimals> <letter>"."""
    lines = []
    for name in sorted(scores_by_student):
        avg = average(scores_by_student[name])
        lines.append(f"{name}: {avg:.2f} {letter_grade(avg)}")
    return lines


def top_student(scores_by_student: dict[str, list[int]]) -> str:
    """Name of the student with the best average (the first name alphabetically on a tie)."""
    if not scores_by_student:
        raise ValueError("empty class")
    return min(sorted(scores_by_student), key=lambda name: -average(scores_by_student[name]))
