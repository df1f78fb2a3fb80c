import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A Kafka message written in the same transaction as the change it announces; a relay publishes it. */
@Entity({ name: 'outbox' })
export class OutboxEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column('text') topic!: string;
  @Column({ type: 'text', nullable: true }) key!: string | null;
  @Column('text') value!: string;
  @Column('jsonb') headers!: Record<string, string>;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}
