"""placeholder: filled in by its issue."""
import click


@click.group(name="eval")
def eval_group() -> None:
    """Batch evaluation on the CPHOS-dataset."""
