from textkit.slug import slugify, unique_slug


def test_words_are_lower_cased_and_joined_with_dashes():
    assert slugify("Hello World") == "hello-world"


def test_punctuation_and_surrounding_spaces_are_dropped():
    assert slugify("  Hello, World!  ") == "hello-world"


def test_accents_are_removed():
    assert slugify("Café Crème") == "cafe-creme"


def test_custom_separator():
    assert slugify("Release notes 2.0", sep="_") == "release_notes_2_0"


def test_long_slugs_are_cut_without_a_trailing_separator():
    assert slugify("alpha beta gamma", max_length=11) == "alpha-beta"


def test_unique_slug_returns_the_plain_slug_when_free():
    assert unique_slug("My Post", taken={"other-post"}) == "my-post"


def test_unique_slug_appends_a_counter():
    assert unique_slug("My Post", taken={"my-post", "my-post-2"}) == "my-post-3"
