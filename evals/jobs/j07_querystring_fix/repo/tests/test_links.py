from urlkit.links import with_params


def test_add_param_to_url_without_query():
    assert with_params("https://shop.example/search", page="2") == "https://shop.example/search?page=2"


def test_existing_value_is_replaced_and_others_kept():
    url = "https://shop.example/search?q=shoes&page=1"
    assert with_params(url, page="2") == "https://shop.example/search?q=shoes&page=2"


def test_fragment_stays_at_the_end():
    assert with_params("/docs?v=1#install", v="2") == "/docs?v=2#install"
