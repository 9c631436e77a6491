"""A shopping cart (shop/cart.py) with coupon codes (shop/coupons.py)."""
