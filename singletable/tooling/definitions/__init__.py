"""Table definitions generated from the model: `schema` (CloudFormation, ``create_table``)."""
