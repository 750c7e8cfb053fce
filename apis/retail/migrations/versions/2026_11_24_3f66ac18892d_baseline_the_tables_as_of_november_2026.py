"""Baseline: the online shop's tables (``retail_*``) as of November 2026, exactly as the pack's loader
created them with ``create_all`` before migrations existed.

Revision ID: 3f66ac18892d
Revises: nothing (the first revision)
Create Date: 2026-11-24 15:13:57.229243
"""

from alembic import context, op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = "3f66ac18892d"
down_revision = None
branch_labels = None
depends_on = None

# Frozen copies of the column types of the time (never imported from the live table modules, which move on).
TABLE_OPTIONS = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_unicode_ci"}


def exact_string(length: int) -> sa.types.TypeEngine:
    """A VARCHAR compared byte-exactly on MySQL (``utf8mb4_bin``), as SQLite compares."""
    return sa.String(length).with_variant(mysql.VARCHAR(length, collation="utf8mb4_bin"), "mysql", "mariadb")


def upgrade() -> None:
    """Create the tables of the baseline that are missing.

    A database made before migrations existed (the loader ran ``create_all``) has these tables already:
    only the missing ones are created, so on such a database this revision changes nothing and is merely
    recorded.
    """
    present = set() if context.is_offline_mode() else set(sa.inspect(op.get_bind()).get_table_names())
    if "retail_customer" not in present:
        op.create_table('retail_customer',
            sa.Column('user_id', exact_string(64), nullable=False),
            sa.Column('seq', sa.Integer(), nullable=False),
            sa.Column('first_name', sa.String(length=64), nullable=False),
            sa.Column('last_name', sa.String(length=64), nullable=False),
            sa.Column('name_key', sa.String(length=130), nullable=False),
            sa.Column('email', sa.String(length=255), nullable=False),
            sa.Column('address1', sa.String(length=255), nullable=False),
            sa.Column('address2', sa.String(length=255), nullable=False),
            sa.Column('city', sa.String(length=128), nullable=False),
            sa.Column('country', sa.String(length=64), nullable=False),
            sa.Column('state', sa.String(length=64), nullable=False),
            sa.Column('zip', sa.String(length=32), nullable=False),
            sa.PrimaryKeyConstraint('user_id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_retail_customer_email', 'retail_customer', ['email'], unique=False)
        op.create_index('ix_retail_customer_name_key', 'retail_customer', ['name_key'], unique=False)

    if "retail_product" not in present:
        op.create_table('retail_product',
            sa.Column('product_id', exact_string(64), nullable=False),
            sa.Column('seq', sa.Integer(), nullable=False),
            sa.Column('name', sa.String(length=128), nullable=False),
            sa.PrimaryKeyConstraint('product_id'),
            **TABLE_OPTIONS,
        )

    if "retail_order" not in present:
        op.create_table('retail_order',
            sa.Column('order_id', exact_string(64), nullable=False),
            sa.Column('seq', sa.Integer(), nullable=False),
            sa.Column('user_id', exact_string(64), nullable=False),
            sa.Column('user_seq', sa.Integer(), nullable=False),
            sa.Column('status', sa.String(length=32), nullable=False),
            sa.Column('address1', sa.String(length=255), nullable=False),
            sa.Column('address2', sa.String(length=255), nullable=False),
            sa.Column('city', sa.String(length=128), nullable=False),
            sa.Column('country', sa.String(length=64), nullable=False),
            sa.Column('state', sa.String(length=64), nullable=False),
            sa.Column('zip', sa.String(length=32), nullable=False),
            sa.Column('cancel_reason', sa.String(length=64), nullable=True),
            sa.Column('exchange_payment_method_id', exact_string(64), nullable=True),
            sa.Column('exchange_price_difference', sa.Numeric(precision=12, scale=2), nullable=True),
            sa.Column('return_payment_method_id', exact_string(64), nullable=True),
            sa.ForeignKeyConstraint(['user_id'], ['retail_customer.user_id'], ),
            sa.PrimaryKeyConstraint('order_id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_retail_order_user', 'retail_order', ['user_id', 'user_seq'], unique=False)

    if "retail_payment_method" not in present:
        op.create_table('retail_payment_method',
            sa.Column('user_id', exact_string(64), nullable=False),
            sa.Column('payment_method_id', exact_string(64), nullable=False),
            sa.Column('seq', sa.Integer(), nullable=False),
            sa.Column('source', sa.String(length=32), nullable=False),
            sa.Column('brand', sa.String(length=32), nullable=True),
            sa.Column('last_four', sa.String(length=4), nullable=True),
            sa.Column('balance', sa.Numeric(precision=12, scale=2), nullable=True),
            sa.ForeignKeyConstraint(['user_id'], ['retail_customer.user_id'], ),
            sa.PrimaryKeyConstraint('user_id', 'payment_method_id'),
            **TABLE_OPTIONS,
        )

    if "retail_variant" not in present:
        op.create_table('retail_variant',
            sa.Column('item_id', exact_string(64), nullable=False),
            sa.Column('product_id', exact_string(64), nullable=False),
            sa.Column('seq', sa.Integer(), nullable=False),
            sa.Column('options', sa.JSON(), nullable=False),
            sa.Column('available', sa.Boolean(), nullable=False),
            sa.Column('price', sa.Numeric(precision=12, scale=2), nullable=False),
            sa.ForeignKeyConstraint(['product_id'], ['retail_product.product_id'], ),
            sa.PrimaryKeyConstraint('item_id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_retail_variant_product', 'retail_variant', ['product_id', 'seq'], unique=False)

    if "retail_fulfilment" not in present:
        op.create_table('retail_fulfilment',
            sa.Column('order_id', exact_string(64), nullable=False),
            sa.Column('seq', sa.Integer(), autoincrement=False, nullable=False),
            sa.ForeignKeyConstraint(['order_id'], ['retail_order.order_id'], ),
            sa.PrimaryKeyConstraint('order_id', 'seq'),
            **TABLE_OPTIONS,
        )

    if "retail_order_item" not in present:
        op.create_table('retail_order_item',
            sa.Column('order_id', exact_string(64), nullable=False),
            sa.Column('seq', sa.Integer(), autoincrement=False, nullable=False),
            sa.Column('item_id', exact_string(64), nullable=False),
            sa.Column('product_id', exact_string(64), nullable=False),
            sa.Column('name', sa.String(length=128), nullable=False),
            sa.Column('price', sa.Numeric(precision=12, scale=2), nullable=False),
            sa.Column('options', sa.JSON(), nullable=False),
            sa.ForeignKeyConstraint(['order_id'], ['retail_order.order_id'], ),
            sa.PrimaryKeyConstraint('order_id', 'seq'),
            **TABLE_OPTIONS,
        )

    if "retail_payment" not in present:
        op.create_table('retail_payment',
            sa.Column('order_id', exact_string(64), nullable=False),
            sa.Column('seq', sa.Integer(), autoincrement=False, nullable=False),
            sa.Column('transaction_type', sa.String(length=16), nullable=False),
            sa.Column('amount', sa.Numeric(precision=12, scale=2), nullable=False),
            sa.Column('payment_method_id', exact_string(64), nullable=False),
            sa.ForeignKeyConstraint(['order_id'], ['retail_order.order_id'], ),
            sa.PrimaryKeyConstraint('order_id', 'seq'),
            **TABLE_OPTIONS,
        )

    if "retail_request_item" not in present:
        op.create_table('retail_request_item',
            sa.Column('order_id', exact_string(64), nullable=False),
            sa.Column('kind', sa.String(length=24), nullable=False),
            sa.Column('seq', sa.Integer(), autoincrement=False, nullable=False),
            sa.Column('item_id', exact_string(64), nullable=False),
            sa.ForeignKeyConstraint(['order_id'], ['retail_order.order_id'], ),
            sa.PrimaryKeyConstraint('order_id', 'kind', 'seq'),
            **TABLE_OPTIONS,
        )

    if "retail_fulfilment_item" not in present:
        op.create_table('retail_fulfilment_item',
            sa.Column('order_id', exact_string(64), nullable=False),
            sa.Column('fulfilment_seq', sa.Integer(), autoincrement=False, nullable=False),
            sa.Column('seq', sa.Integer(), autoincrement=False, nullable=False),
            sa.Column('item_id', exact_string(64), nullable=False),
            sa.ForeignKeyConstraint(['order_id', 'fulfilment_seq'],
                                    ['retail_fulfilment.order_id', 'retail_fulfilment.seq']),
            sa.PrimaryKeyConstraint('order_id', 'fulfilment_seq', 'seq'),
            **TABLE_OPTIONS,
        )

    if "retail_fulfilment_tracking" not in present:
        op.create_table('retail_fulfilment_tracking',
            sa.Column('order_id', exact_string(64), nullable=False),
            sa.Column('fulfilment_seq', sa.Integer(), autoincrement=False, nullable=False),
            sa.Column('seq', sa.Integer(), autoincrement=False, nullable=False),
            sa.Column('tracking_id', exact_string(64), nullable=False),
            sa.ForeignKeyConstraint(['order_id', 'fulfilment_seq'],
                                    ['retail_fulfilment.order_id', 'retail_fulfilment.seq']),
            sa.PrimaryKeyConstraint('order_id', 'fulfilment_seq', 'seq'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_retail_fulfilment_tracking_id', 'retail_fulfilment_tracking', ['tracking_id'],
                        unique=False)


def downgrade() -> None:
    """Never: it would drop every table with its rows."""
    raise NotImplementedError("the baseline is not downgraded: it would drop every table and its rows")
