from shop.coupons import apply_coupon, discount_percent


def test_known_code_ignores_case_and_spaces():
    assert discount_percent(" save10 ") == 10


def test_unknown_code_gives_no_discount():
    assert discount_percent("FREE") == 0
    assert apply_coupon(20.0, "FREE") == 20.0


def test_apply_coupon_takes_the_percentage_off():
    assert apply_coupon(20.0, "SAVE10") == 18.0
    assert apply_coupon(9.99, "HALFPRICE") == 5.0
